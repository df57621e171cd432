"""Fixtures for the e-mail adapters: order data and real aiosmtpd servers on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from skincare_core.shop.models import OrderItem
from skincare_core.shop.ports import OrderEmail
from tests.email.email_support import StartServer, authenticate, free_port


@pytest.fixture
def order_email() -> OrderEmail:
    """An order of two lines worth Rp 1.250.000."""
    items = (
        OrderItem(product_id=1, name="Serum Vitamin C 30ml", quantity=2, unit_price_rupiah=125_000),
        OrderItem(product_id=2, name="Toner Centella", quantity=1, unit_price_rupiah=1_000_000),
    )
    return OrderEmail("SKN-20261201-ABCD1234", items, 1_250_000, "9f1c2e7a0b4d4c55", "id")


@pytest.fixture
def smtp_server() -> Iterator[StartServer]:
    """Start an SMTP server for a handler on a free 127.0.0.1 port; returns the port."""
    controllers: list[Controller] = []

    def start(handler: object, **kwargs: Any) -> int:
        port = free_port()
        controller = Controller(handler, hostname="127.0.0.1", port=port, **kwargs)
        controller.start()
        controllers.append(controller)
        return port

    yield start
    for controller in controllers:
        controller.stop()


@pytest.fixture
def authenticator() -> Callable[..., AuthResult]:
    """Accepts USERNAME / PASSWORD only."""
    return authenticate


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory = tmp_path_factory.mktemp("tls")
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture
def server_tls(tls_files: tuple[Path, Path]) -> ssl.SSLContext:
    """The server side of TLS."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*tls_files)
    return context


@pytest.fixture
def client_tls(tls_files: tuple[Path, Path]) -> ssl.SSLContext:
    """A client context that trusts only the test certificate."""
    return ssl.create_default_context(cafile=str(tls_files[0]))
