"""The self-signed certificate of the API's https port: kubectl sends a kubeconfig's bearer
token over https only, so Daphne also listens with TLS (a Twisted ``ssl:`` endpoint) and the
kubeconfig carries this CA as ``certificate-authority-data``. Made once into a directory
(``.run/kubeapi-tls`` for ``make run``): a CA and a server certificate it signs for
localhost, 127.0.0.1 and ::1 (and any names given). No Django: scripts call it before the
app starts."""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

CA, CERT, KEY = "ca.pem", "server.pem", "server-key.pem"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def ensure(directory: Path, names: tuple[str, ...] = ()) -> Path:
    """The directory with ca.pem, server.pem and server-key.pem, made when missing."""
    directory.mkdir(parents=True, exist_ok=True)
    if all((directory / f).exists() for f in (CA, CERT, KEY)):
        return directory
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    later = now + datetime.timedelta(days=3650)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("node-failure playground kubeapi CA"))
        .issuer_name(_name("node-failure playground kubeapi CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = [x509.DNSName("localhost")]
    alt += [x509.IPAddress(ipaddress.ip_address(a)) for a in ("127.0.0.1", "::1")]
    for name in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alt.append(x509.DNSName(name))
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (directory / CA).write_bytes(ca.public_bytes(pem))
    (directory / CERT).write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))
    key_path = directory / KEY
    key_path.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    os.chmod(key_path, 0o600)
    return directory


def endpoint(directory: Path, port: int, interface: str = "127.0.0.1") -> str:
    """Daphne's ``-e`` endpoint string of the https port (colons in paths escaped)."""

    def esc(p: Path) -> str:
        return str(p.resolve()).replace(":", r"\:")

    iface = interface.replace(":", r"\:")
    return f"ssl:{port}:interface={iface}:privateKey={esc(directory / KEY)}:certKey={esc(directory / CERT)}"
