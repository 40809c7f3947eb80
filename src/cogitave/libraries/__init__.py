"""Libraries and versions: one collection holding the docs of many libraries, each at one or
more versions (:mod:`~cogitave.libraries.collection`), and a project's own versions of them
(:mod:`~cogitave.libraries.project`)."""
