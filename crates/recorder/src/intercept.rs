//! TLS interception for `--mode mitm`: a certificate authority made for one recorder run and a
//! server certificate it signs for the upstream's host.
//!
//! The CA is name-constrained to that one host, and its private key lives only in this
//! process: it is never written, so a CA certificate a user trusted for one run cannot stand
//! in for another site, nor for anything once the run is over. The binary writes the CA
//! *certificate* to a file the client is told to trust (`SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`,
//! `NODE_EXTRA_CA_CERTS`, `curl --cacert`).

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CidrSubnet, DistinguishedName, DnType, GeneralSubtree,
    IsCa, Issuer, KeyPair, KeyUsagePurpose, NameConstraints,
};

use crate::RecorderError;

/// The run's CA certificate and the TLS server configuration answering as the upstream's host.
pub struct InterceptCa {
    cert_pem: String,
    server: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for InterceptCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterceptCa").finish_non_exhaustive()
    }
}

impl InterceptCa {
    /// Make a CA and a certificate for `host` (a DNS name or an IP address) signed by it.
    pub fn generate(host: &str) -> Result<InterceptCa, RecorderError> {
        let fail = |what: &str, e: rcgen::Error| {
            RecorderError::Tls(format!("cannot make the interception {what}: {e}"))
        };
        let ca_key = KeyPair::generate().map_err(|e| fail("CA key", e))?;
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(|e| fail("CA", e))?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        // The CA may only vouch for the upstream's host: trusted by mistake beyond the one
        // client it was meant for, it still cannot stand in for any other site.
        ca.name_constraints = Some(NameConstraints {
            permitted_subtrees: vec![match host.parse::<IpAddr>() {
                Ok(IpAddr::V4(ip)) => {
                    GeneralSubtree::IpAddress(CidrSubnet::from_v4_prefix(ip.octets(), 32))
                }
                Ok(IpAddr::V6(ip)) => {
                    GeneralSubtree::IpAddress(CidrSubnet::from_v6_prefix(ip.octets(), 128))
                }
                Err(_) => GeneralSubtree::DnsName(host.to_string()),
            }],
            excluded_subtrees: Vec::new(),
        });
        let mut name = DistinguishedName::new();
        name.push(
            DnType::CommonName,
            "wraith record interception CA (one run)",
        );
        ca.distinguished_name = name;
        let ca_cert = ca.self_signed(&ca_key).map_err(|e| fail("CA", e))?;
        let issuer = Issuer::new(ca, ca_key);

        let leaf_key = KeyPair::generate().map_err(|e| fail("server key", e))?;
        let mut leaf =
            CertificateParams::new(vec![host.to_string()]).map_err(|e| fail("certificate", e))?;
        let mut leaf_name = DistinguishedName::new();
        leaf_name.push(DnType::CommonName, host);
        leaf.distinguished_name = leaf_name;
        let leaf_cert = leaf
            .signed_by(&leaf_key, &issuer)
            .map_err(|e| fail("certificate", e))?;

        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(
            rustls::pki_types::PrivatePkcs8KeyDer::from(leaf_key.serialize_der()),
        );
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| RecorderError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(vec![leaf_cert.der().clone(), ca_cert.der().clone()], key)
            .map_err(|e| RecorderError::Tls(e.to_string()))?;
        server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(InterceptCa {
            cert_pem: ca_cert.pem(),
            server: Arc::new(server),
        })
    }

    /// The CA certificate, PEM-encoded: what the client must trust.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.server.clone())
    }
}
