"""Core building blocks: vocabulary, schema, database wrapper and text utilities."""
