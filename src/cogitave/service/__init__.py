"""Typed service operations over a reader: what every surface asks, in one place
(:mod:`~cogitave.service.args` the arguments, :mod:`~cogitave.service.ops` the operations,
:mod:`~cogitave.service.render` the Markdown answers)."""
