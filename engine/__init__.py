"""Rules engines for card games of the Basra family: pure, no I/O, no clock, no global random."""
