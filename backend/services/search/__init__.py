"""Querying a table through QueryTable / ExplainTableQueryPlan / AnalyzeTableQueryPlan, one
module per feature (no streamlit; the same on the local backend and over REST):

* :mod:`.query` - requests, runs, rows in pages, counts, timed runs (the base of the others);
* :mod:`.preview` - the data preview;
* :mod:`.embedding` - query vectors made from text with the table's embedding;
* :mod:`.vector` - vector search, the index it uses and its metric;
* :mod:`.fulltext` - full-text search and highlighting;
* :mod:`.plans` - query plans, parsed and summed up;
* :mod:`.table` - what the search page knows about a table.
"""
