"""bufferlab controller."""
