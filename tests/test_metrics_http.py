"""The metrics endpoint's HTTP server and text, without a broker: what each path answers, the health
before the broker serves, and label values a Prometheus parser must read back intact."""

from __future__ import annotations

import socket

import anyio
import pytest
from anyio.abc import SocketListener
from prometheus_client.parser import text_string_to_metric_families

from pykbroker.server.metrics import MetricFamily, render
from pykbroker.server.metrics_http import Health, MetricsHttpServer, bind_metrics_socket
from pykbroker.server.request_metrics import RequestMetrics


def exchange(request: bytes, *, ready: bool = True) -> bytes:
    """What a server that renders one gauge and reports `ready` answers to `request`."""
    health = Health(ready, {"status": "UP" if ready else "STARTING"})
    server = MetricsHttpServer(lambda: "# TYPE up gauge\nup 1\n", lambda: health)
    sock = bind_metrics_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]

    async def main() -> bytes:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve, await SocketListener.from_socket(sock))
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                await stream.send(request)
                answer = b""
                try:
                    while True:
                        answer += await stream.receive()
                except anyio.EndOfStream:
                    pass
            tasks.cancel_scope.cancel()
        return answer

    return anyio.run(main)


def status_and_body(answer: bytes) -> tuple[int, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_metrics_answers_the_rendered_text():
    status, body = status_and_body(exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert (status, body) == (200, b"# TYPE up gauge\nup 1\n")


def test_health_is_503_until_the_broker_serves():
    status, body = status_and_body(exchange(b"GET /health HTTP/1.1\r\n\r\n", ready=False))
    assert (status, body) == (503, b'{"status": "STARTING"}')


@pytest.mark.parametrize(
    ("request_line", "status"),
    [
        (b"GET /nowhere HTTP/1.1", 404),
        (b"POST /metrics HTTP/1.1", 405),
        (b"nonsense", 400),
    ],
)
def test_what_is_not_a_get_of_metrics_or_health_is_refused(request_line, status):
    assert status_and_body(exchange(request_line + b"\r\n\r\n"))[0] == status


def test_head_answers_the_headers_only():
    answer = exchange(b"HEAD /metrics HTTP/1.1\r\n\r\n")
    assert status_and_body(answer) == (200, b"")
    assert b"Content-Length: 21\r\n" in answer


def test_a_port_in_use_names_the_key_and_the_address():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"pykbroker.metrics.listener to http://127.0.0.1:{port}"):
            bind_metrics_socket("127.0.0.1", port)


def test_label_values_are_escaped_so_that_a_parser_reads_them_back():
    group = 'a "quoted"\\group\nid'
    family = MetricFamily("kafka_consumergroup_lag", "gauge", "lag").add(3, consumergroup=group)
    parsed = list(text_string_to_metric_families(render([family])))
    assert parsed[0].samples[0].labels == {"consumergroup": group}


def test_request_latency_quantiles_come_from_the_recent_requests():
    metrics = RequestMetrics()
    for elapsed_ms in range(1, 101):
        metrics.record(0, 9, float(elapsed_ms))
    produce = metrics.by_name["Produce"]
    assert produce.count == 100 and produce.requests_by_version == {9: 100}
    assert dict(produce.latency_quantiles())[0.5] == 51.0
    assert dict(produce.latency_quantiles())[0.999] == 100.0
