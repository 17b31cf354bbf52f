"""The diagnosis's checks, one module per family of signals. Each has `check(run, ...)` returning a
list of `Finding`s, and finds its cause from what the run measured: the scenario only says where
things are (which GPU a rank runs on, what a switch is called) and how the job was planned."""
