"""Libraries and versions: the docs of many libraries, each at one or more versions."""
