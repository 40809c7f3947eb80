"""Sharded collections: N ordinary collections behind one manifest, built and searched on
Ray (or shard by shard in one process) with the answers of one collection."""
