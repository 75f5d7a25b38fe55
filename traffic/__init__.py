"""bufferlab traffic."""
