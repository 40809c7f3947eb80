"""Write-time expansion tiers."""
