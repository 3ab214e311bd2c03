"""`tls:` through `litmus run` against an HTTPS server on 127.0.0.1 that requires a client certificate, with
a CA, a server certificate (subjectAltName IP:127.0.0.1) and a client certificate made by the `openssl`
CLI; and the refusals of `litmus validate`: TLS files outside the repository or through a symlink leading
out, a private key git tracks, a key in an untracked run, and a key's content in no output."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from litmus.errors import ProbeError
from litmus.load import load_suites
from litmus.trust import Trust
from support.cli import litmus
from support.server import LocalServer

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")


def _openssl(cwd: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _issue(cwd: Path, name: str, subject: str, extensions: str) -> None:
    """`name`.key and `name`.pem: an EC key and its certificate, signed by the CA in `cwd`."""
    _openssl(cwd, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject)
    (cwd / f"{name}.ext").write_text(extensions)
    _openssl(cwd, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, made with the openssl CLI."""
    cwd = tmp_path_factory.mktemp("pki")
    _openssl(cwd, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Litmus Test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _issue(cwd, "server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _issue(cwd, "client", "/CN=litmus-probe", "extendedKeyUsage=clientAuth\n")
    return cwd


class _Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        subject = dict(item[0] for item in self.connection.getpeercert()["subject"])
        body = f"hello {subject['commonName']}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class MutualTlsServer(LocalServer):
    """HTTPS on 127.0.0.1 that requires a client certificate signed by the test CA."""

    def __init__(self, pki: Path) -> None:
        super().__init__(_Hello)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pki / "server.pem", pki / "server.key")
        context.load_verify_locations(pki / "ca.pem")
        context.verify_mode = ssl.CERT_REQUIRED
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"


@pytest.fixture
def project(tmp_path, certificates):
    """A git repository with the CA and client certificate tracked, the client key untracked (as a workflow
    step writes it from a secret)."""
    tls = tmp_path / "probes" / "tls"
    tls.mkdir(parents=True)
    for name in ("ca.pem", "client.pem", "client.key"):
        shutil.copy(certificates / name, tls / name)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "probes/tls/ca.pem", "probes/tls/client.pem"], cwd=tmp_path, check=True)
    return tmp_path


def suite(project: Path, tls: str, defaults: str = "") -> None:
    (project / "probes" / "s.yaml").write_text(f"""\
version: 1
suite: TLS
{defaults}flows:
  - name: f
    steps:
      - name: hello
        request:
          url: /hello
{tls}        assertions: [{{type: body, expected: hello litmus-probe}}]
""")


CLIENT = "client_cert: tls/client.pem, client_key: tls/client.key"


def run(project: Path, server: MutualTlsServer):
    return litmus(project, "run", "--base-url", server.base_url, "--format", "markdown,html,sarif,junit")


def written(project: Path) -> str:
    return "".join(p.read_text("utf-8") for p in (project / "litmus-report").iterdir() if p.is_file())


def step_error(project: Path) -> str:
    results = json.loads((project / "litmus-report" / "results.json").read_text())
    return results["suites"][0]["flow_runs"][0]["steps"][0]["error"] or ""


def test_a_ca_file_and_a_client_certificate_pass_and_the_key_is_in_no_output(project, certificates):
    suite(project, f"          tls: {{ca_file: tls/ca.pem, {CLIENT}}}\n")
    with MutualTlsServer(certificates) as server:
        done = run(project, server)
    assert done.returncode == 0, done.stdout + done.stderr
    key_body = "".join((certificates / "client.key").read_text().splitlines()[1:-1])
    output = done.stdout + done.stderr + written(project)
    assert key_body[:40] not in output and "PRIVATE KEY" not in output


def test_the_suite_defaults_tls_applies_and_verify_false_passes_without_a_ca_file(project, certificates):
    suite(project, "", defaults=f"defaults:\n  tls: {{verify: false, {CLIENT}}}\n")
    with MutualTlsServer(certificates) as server:
        done = run(project, server)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "InsecureRequestWarning" not in done.stderr
    sent = json.loads((project / "litmus-report" / "results.json").read_text())
    assert sent["suites"][0]["flow_runs"][0]["steps"][0]["request"]["tls"] == {
        "verify": False, "ca_file": None, "client_cert": "probes/tls/client.pem", "client_key": "probes/tls/client.key"}


def test_without_the_ca_file_the_step_is_an_error_naming_tls(project, certificates):
    suite(project, f"          tls: {{{CLIENT}}}\n")
    with MutualTlsServer(certificates) as server:
        done = run(project, server)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "TLS" in step_error(project) and "certificate verify failed" in step_error(project)
    # The curl reproduction presents the same client certificate (named, never its content).
    assert "--cert probes/tls/client.pem --key probes/tls/client.key" in written(project)


def test_a_request_tls_replaces_the_suite_defaults_and_without_a_client_certificate_it_fails(project, certificates):
    suite(project, "          tls: {ca_file: tls/ca.pem}\n",
          defaults=f"defaults:\n  tls: {{ca_file: tls/ca.pem, {CLIENT}}}\n")
    with MutualTlsServer(certificates) as server:
        done = run(project, server)
    assert done.returncode == 1, done.stdout + done.stderr
    assert step_error(project)  # the server's refusal arrives as a TLS alert or a reset, depending on timing


# -- refusals at load (the policy table's attack tests) -------------------------------------------------------


def validate_errors(project: Path, tls: str) -> str:
    suite(project, f"          tls: {tls}\n")
    done = litmus(project, "validate")
    assert done.returncode == 2, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_tls_files_outside_the_repository_or_through_a_symlink_leading_out_are_positioned_errors(
        project, certificates):
    out = validate_errors(project, f"{{ca_file: {certificates / 'ca.pem'}}}")
    assert "probes/s.yaml:9:" in out
    (project / "probes" / "tls" / "leak.key").symlink_to(certificates / "client.key")
    out = validate_errors(project, "{client_cert: tls/client.pem, client_key: tls/leak.key}")
    assert "probes/s.yaml:9:" in out and "leak.key" in out
    assert "PRIVATE KEY" not in out


def test_a_private_key_git_tracks_is_refused_saying_how_to_write_it_from_a_secret(project):
    subprocess.run(["git", "add", "probes/tls/client.key"], cwd=project, check=True)
    out = validate_errors(project, f"{{{CLIENT}}}")
    assert "probes/s.yaml:9:58: error: 'tls/client.key' holds a private key and git tracks it" in out
    assert "untracked file" in out and "PRIVATE KEY-----" not in out
    # A client_cert PEM that carries its key is a key file too.
    combined = project / "probes" / "tls" / "both.pem"
    combined.write_text((project / "probes" / "tls" / "client.pem").read_text()
                        + (project / "probes" / "tls" / "client.key").read_text())
    subprocess.run(["git", "add", "probes/tls/both.pem"], cwd=project, check=True)
    out = validate_errors(project, "{client_cert: tls/both.pem}")
    assert "'tls/both.pem' holds a private key and git tracks it" in out


def test_an_encrypted_key_is_refused_rather_than_asking_for_its_passphrase(project):
    tls = project / "probes" / "tls"
    _openssl(tls, "pkey", "-in", "client.key", "-out", "locked.key", "-aes256", "-passout", "pass:litmus")
    out = validate_errors(project, "{client_cert: tls/client.pem, client_key: tls/locked.key}")
    assert "probes/s.yaml:9:58: error: 'tls/locked.key' holds a private key that is encrypted" in out


def test_an_untrusted_run_does_not_use_a_client_key_but_may_choose_its_own_verification(project):
    untrusted = Trust(False, "a fork's pull request")
    suite(project, f"          tls: {{{CLIENT}}}\n")
    with pytest.raises(ProbeError) as info:
        load_suites([project / "probes" / "s.yaml"], root=project, environ={}, trust=untrusted)
    assert [(d.position.line, d.position.column) for d in info.value.diagnostics] == [(9, 58)]
    assert "untrusted run" in info.value.diagnostics[0].message
    suite(project, "          tls: {verify: false}\n")
    assert load_suites([project / "probes" / "s.yaml"], root=project, environ={}, trust=untrusted)
