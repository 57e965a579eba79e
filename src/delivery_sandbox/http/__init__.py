"""The HTTP layer: the ASGI app and its routes, the socket transport, common headers,
authentication, dated versions and the two error formats.
"""
