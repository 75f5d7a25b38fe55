"""bufferlab analysis: statistics, regression, fairness, time series, plots, reports, progress.

Stands alone (imports none of the other bufferlab packages): it turns the CSV
files the experiments write into figures and Markdown reports.
"""
