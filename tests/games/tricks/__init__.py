"""Tricks: a tiny trick-taking game, one package, to show (and test) that a new game needs
nothing but its package (docs/adding-a-game.md walks through it)."""
