"""The interop suite, the reverse-proxy tests and the allocation failure
sweep: a package, so that its programs and bench/'s import each other's
modules by name.  Every program here runs as a module from the
repository's root, e.g. python3 -m interop.run_interop (interop/README.md).
"""
