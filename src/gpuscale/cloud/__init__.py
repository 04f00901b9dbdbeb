"""DigitalOcean provisioning (DOKS clusters, GPU node pools and add-ons) through pydo."""
