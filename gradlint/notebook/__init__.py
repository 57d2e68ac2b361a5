"""Jupyter notebooks: the code cells read as one Python program, fixes written back
into the cell sources with every other byte of the JSON kept."""
