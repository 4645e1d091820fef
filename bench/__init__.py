"""The nginx benchmark (nginx_bench and the modules it runs) and the codec
benchmark's report: a package, so that its programs and interop/'s import
each other's modules by name.  Every program here runs as a module from the
repository's root, e.g. python3 -m bench.nginx_bench (bench/README.md).
"""
