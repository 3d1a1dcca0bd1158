"""Group scenes: several characters in one chat (cast.py, speakers.py, turns.py, opening.py)."""
