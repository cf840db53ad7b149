"""The web app: the application factory, settings, dependencies, HTTP routes and middleware."""

__all__: list[str] = []
