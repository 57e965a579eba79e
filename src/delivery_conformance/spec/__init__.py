"""The spec as typed tables: requirements, endpoints (operation names) and the documented error
answers.
"""
