// reports/: Comparison (rows of metrics per side) and its renderers.
