"""Operating the sandbox: the admin API under /_sandbox/, outages, the profile it writes and the
command line.
"""
