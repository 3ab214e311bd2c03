"""Talking to GitHub: workflow commands, environment files, the event context and the REST API.

Every module here is I/O at the edge of the pipeline (load -> run -> report -> github). Each takes
what it talks to (a stream, a path, a `GitHubClient`) as an argument, so it is tested on its own
against a fake GitHub API; `litmus.commands.action` wires them together.
"""
