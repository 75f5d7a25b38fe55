"""The bufferlab switch: the Rust engine (`_engine`) and the Python around it."""
