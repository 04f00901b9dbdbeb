"""The pure half of ``gpuscale verify``, by concern; :mod:`gpuscale.live.verify` is its
public face."""
