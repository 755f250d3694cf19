"""OpenCV vision: find the board, rectify it, read every cell, and wait for hands to leave."""
