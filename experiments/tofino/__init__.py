"""The seed studies on the lab's switch and on its Tofino port, side by side (`make run-tofino`)."""
