"""Reports from timelines: text summaries, PNG plots and a self-contained HTML page."""
