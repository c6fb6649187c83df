//! TLS to a PostgreSQL results database through rustls (no OpenSSL, so the binary needs
//! only the C library), with libpq's `sslmode` meanings: `prefer` and `require` encrypt
//! without checking the certificate; `verify-ca` checks the chain against the trusted
//! roots (the system's and `sslrootcert`), not the host name; `verify-full` checks both.
//! A certificate that is itself one of the `sslrootcert` certificates (a self-signed
//! server certificate, as libpq accepts) is trusted as it is; `verify-full` still checks
//! its names.

use super::location::{PgTarget, TlsMode};
use crate::error::usage;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_name, WebPkiServerVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What is checked of the server's certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// Nothing: encryption only.
    Nothing,
    /// The chain up to a trusted root.
    Chain,
    /// The chain and the host name.
    ChainAndName,
}

impl Check {
    fn of(mode: TlsMode) -> Check {
        match mode {
            TlsMode::Disable | TlsMode::Allow | TlsMode::Prefer | TlsMode::Require => {
                Check::Nothing
            }
            TlsMode::VerifyCa => Check::Chain,
            TlsMode::VerifyFull => Check::ChainAndName,
        }
    }
}

#[derive(Debug)]
struct Verifier {
    check: Check,
    /// The certificates of `sslrootcert`, trusted as server certificates as they are.
    pinned: Vec<CertificateDer<'static>>,
    /// The chain check (None when no root is trusted at all).
    webpki: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if self.check == Check::Nothing {
            return Ok(ServerCertVerified::assertion());
        }
        if self
            .pinned
            .iter()
            .any(|p| p.as_ref() == end_entity.as_ref())
        {
            if self.check == Check::ChainAndName {
                verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name)?;
            }
            return Ok(ServerCertVerified::assertion());
        }
        let Some(webpki) = &self.webpki else {
            return Err(Error::InvalidCertificate(CertificateError::UnknownIssuer));
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The certificates of the URL's `sslrootcert`, if any (exit 2 when unreadable or not PEM).
fn root_cert_file(t: &PgTarget) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let Some(file) = &t.root_cert else {
        return Ok(Vec::new());
    };
    let pem = std::fs::read(file).map_err(|e| {
        usage(format!(
            "cannot read sslrootcert {} of results database {t}: {e}",
            file.display()
        ))
    })?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            usage(format!(
                "sslrootcert {} of results database {t} is not a PEM certificate",
                file.display()
            ))
        })?;
    Ok(certs)
}

/// The TLS connector the URL's sslmode asks for.
pub fn connector(t: &PgTarget) -> anyhow::Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let check = Check::of(t.tls);
    let pinned = root_cert_file(t)?;
    let mut webpki = None;
    if check != Check::Nothing {
        let mut roots = RootCertStore::empty();
        // The system's trusted roots (as OpenSSL would use them); unreadable ones are
        // skipped: a root that cannot be read is not trusted.
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        roots.add_parsable_certificates(pinned.iter().cloned());
        if !roots.is_empty() {
            webpki = Some(
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| {
                        anyhow::anyhow!("cannot set up TLS for results database {t}: {e}")
                    })?,
            );
        }
    }
    let verifier = Verifier {
        check,
        pinned,
        webpki,
        provider: provider.clone(),
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("cannot set up TLS for results database {t}: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmodes_check_what_libpq_checks() {
        assert_eq!(Check::of(TlsMode::Prefer), Check::Nothing);
        assert_eq!(Check::of(TlsMode::Require), Check::Nothing);
        assert_eq!(Check::of(TlsMode::VerifyCa), Check::Chain);
        assert_eq!(Check::of(TlsMode::VerifyFull), Check::ChainAndName);
    }

    #[test]
    fn a_verifying_mode_without_any_trusted_root_refuses_the_certificate() {
        let v = Verifier {
            check: Check::Chain,
            pinned: Vec::new(),
            webpki: None,
            provider: Arc::new(rustls::crypto::ring::default_provider()),
        };
        let cert = CertificateDer::from(vec![0x30, 0x00]);
        let name = ServerName::try_from("localhost").unwrap();
        let err = v
            .verify_server_cert(&cert, &[], &name, &[], UnixTime::now())
            .unwrap_err();
        assert_eq!(
            err,
            Error::InvalidCertificate(CertificateError::UnknownIssuer)
        );
        let open = Verifier {
            check: Check::Nothing,
            ..v
        };
        assert!(open
            .verify_server_cert(&cert, &[], &name, &[], UnixTime::now())
            .is_ok());
    }
}
