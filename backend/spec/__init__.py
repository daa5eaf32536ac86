"""The Lance Namespace spec as the console uses it, below both backends.

* :mod:`.operations` - every operation of the spec and of the console backends, each
  read-only or not (``access``, ``gate``, ``branch_view`` and ``rest.routes`` read it);
* :mod:`.catalog_views` - the reads the rules need, through the spec's calls on any namespace;
* :mod:`.fields` - a field of a spec model or of its dict form;
* :mod:`.paging` - following ``page_token`` and reading listings page by page;
* :mod:`.fanout` - one request per item where the spec has no bulk form, a few at once.
"""
