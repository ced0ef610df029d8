"""Task and group YAML: schema, safe loading with positions, includes, validation, selection."""
