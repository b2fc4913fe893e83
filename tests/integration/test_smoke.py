"""The README's main job works: scalwsd serves the example site."""
from harness import Scalwsd, curl, parse_responses, raw_request

EXAMPLE = open(__import__("os").path.join(__import__("harness").SOURCE_DIR,
                                          "deploy/examples/site.toml")).read()


def example_on_free_port():
    # The copy is written to a temp dir: point its relative docroot back at the example's.
    www = __import__("os").path.join(__import__("os").path.abspath(__import__("harness").SOURCE_DIR),
                                     "deploy/examples/www")
    return EXAMPLE.replace("127.0.0.1:8080", "127.0.0.1:$port").replace(
        'root = "www"', 'root = "%s"' % www)


def test_example_site_serves_health_and_catch_all():
    with Scalwsd(example_on_free_port()) as s:
        code, body, err = curl("-i", s.url("/health"))
        assert code == 0, err
        resp = parse_responses(body)[0]
        assert resp.status == 200
        assert resp.body == b"ok\n"
        assert resp.header("content-type") == "text/plain"
        assert resp.header("server") == "scalws"
        assert resp.header("date").endswith("GMT")
        code, body, _ = curl(s.url("/anything"))
        assert body == b"Hello from ScalWS\n"
        s.assert_no_fd_leak()


def test_two_workers_in_multi_mode():
    with Scalwsd(example_on_free_port()) as s:
        assert len(s.workers()) == 2
        data = raw_request(s.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert parse_responses(data)[0].status == 200
