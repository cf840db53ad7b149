"""The Domeng Online test suite (a package so modules can share ``tests.conftest``'s builders)."""
