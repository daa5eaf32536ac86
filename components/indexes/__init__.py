"""The Indexes page's parts, one module each: cached reads (``reads``), the index list and lag
hint (``listing``), the create panel (``create``, its type's fields in ``fields``), builds in
progress (``builds``), the selected index and drop form (``selected``), the statistics charts
(``statistics``), maintenance (``maintenance``) and the tabs (``tabs``).
"""
