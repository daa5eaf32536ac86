"""Imported before any module of this package: the spec's generated client package is deferred
(:mod:`backend.spec.client_package`) before the first import of ``lance_namespace``, wherever
this package's modules import it first."""

from backend.spec.client_package import defer_api_modules

defer_api_modules()
