"""bufferlab analysis."""
