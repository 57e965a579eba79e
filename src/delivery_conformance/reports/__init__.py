"""From events to verdicts and files: results, the report writer, HTML/JUnit/Markdown views and
redaction.
"""
