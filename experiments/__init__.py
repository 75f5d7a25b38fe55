"""bufferlab experiments."""
