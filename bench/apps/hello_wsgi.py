# The `python` scenario's app: a hello-world WSGI callable, served by gunicorn.
BODY = b"hello from python\n"


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(BODY)))])
    return [BODY]
