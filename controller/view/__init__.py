"""The live view of a buffer_switch.p4 switch: `bufferlab-view` (cli), `LiveView` (server)."""
