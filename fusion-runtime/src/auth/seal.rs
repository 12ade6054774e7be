//! Sealing: bytes signed with HMAC-SHA256 into one URL-safe string, opened only with the
//! same key.
//!
//! A sealed text is `<prefix><body>.<mac>`: the versioned prefix (`dg1.` for delegation
//! tokens, `hd1.` for gateway handles, `pg1.` for list cursors; MRTR request state is sealed
//! by rmcp's `RequestStateCodec`), the payload in unpadded base64url, a dot, and the
//! unpadded base64url HMAC-SHA256 of everything before that dot — the prefix is signed too,
//! so a text sealed for one purpose never opens as another's, even under the same key.
//!
//! Sealing signs, it does not encrypt: anyone holding the text can read the payload. Opening
//! checks the length bound first (nothing is decoded past it), then the shape, then the MAC
//! in constant time ([`Mac::verify_slice`]), and only then decodes the payload.

use base64::Engine;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The length of a MAC in base64url: 32 bytes, unpadded.
const MAC_CHARS: usize = 43;

/// Why a text could not be sealed or opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The sealed text is (or would be) longer than its bound.
    #[error("the sealed text exceeds its size bound")]
    TooLarge,
    /// Not a sealed text of this kind: wrong prefix, no MAC, not base64url.
    #[error("not a sealed text of this kind")]
    Malformed,
    /// The MAC does not match: tampered with, or sealed with another key.
    #[error("the seal does not verify")]
    BadSignature,
    /// The key was refused (HMAC takes keys of any length, so this does not happen; it is
    /// here so that no path panics).
    #[error("the key was refused")]
    InvalidKey,
}

/// A kind of sealed text: its versioned prefix and the longest text it writes or reads.
///
/// ```
/// use fusion_runtime::auth::Seal;
///
/// const STATE: Seal = Seal::new("st1.", 4096);
/// let key = b"at least 32 bytes of secret key material";
/// let sealed = STATE.seal(key, b"{\"step\":2}")?;
/// assert!(sealed.starts_with("st1."));
/// assert_eq!(STATE.open(key, &sealed)?, b"{\"step\":2}");
/// assert!(STATE.open(b"another key, also 32 bytes or more", &sealed).is_err());
/// # Ok::<(), fusion_runtime::auth::SealError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seal {
    prefix: &'static str,
    max_bytes: usize,
}

impl Seal {
    /// Texts that start with `prefix` (end it with a version and a dot: `st1.`) and are at
    /// most `max_bytes` long.
    pub const fn new(prefix: &'static str, max_bytes: usize) -> Self {
        Seal { prefix, max_bytes }
    }

    /// The prefix.
    pub const fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// The longest text sealed or opened.
    pub const fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The sealed text of `payload` under `key`; [`SealError::TooLarge`] when it would exceed
    /// [`Seal::max_bytes`].
    pub fn seal(&self, key: &[u8], payload: &[u8]) -> Result<String, SealError> {
        let len = self.prefix.len() + (payload.len() * 4).div_ceil(3) + 1 + MAC_CHARS;
        if len > self.max_bytes {
            return Err(SealError::TooLarge);
        }
        let mut sealed = String::with_capacity(len);
        sealed.push_str(self.prefix);
        BASE64_URL_SAFE_NO_PAD.encode_string(payload, &mut sealed);
        let mac = keyed(key, sealed.as_bytes())?.finalize().into_bytes();
        sealed.push('.');
        BASE64_URL_SAFE_NO_PAD.encode_string(mac, &mut sealed);
        Ok(sealed)
    }

    /// The payload of `sealed`, when it is a text of this kind, within the bound, and its MAC
    /// verifies under `key` (compared in constant time).
    pub fn open(&self, key: &[u8], sealed: &str) -> Result<Vec<u8>, SealError> {
        if sealed.len() > self.max_bytes {
            return Err(SealError::TooLarge);
        }
        let (signed, mac) = sealed.rsplit_once('.').ok_or(SealError::Malformed)?;
        let body = signed
            .strip_prefix(self.prefix)
            .ok_or(SealError::Malformed)?;
        if mac.len() != MAC_CHARS {
            return Err(SealError::Malformed);
        }
        let mac = BASE64_URL_SAFE_NO_PAD
            .decode(mac)
            .map_err(|_| SealError::Malformed)?;
        keyed(key, signed.as_bytes())?
            .verify_slice(&mac)
            .map_err(|_| SealError::BadSignature)?;
        BASE64_URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| SealError::Malformed)
    }
}

/// HMAC-SHA256 of `message` under `key`, not yet finalized.
fn keyed(key: &[u8], message: &[u8]) -> Result<HmacSha256, SealError> {
    let mut mac =
        <HmacSha256 as KeyInit>::new_from_slice(key).map_err(|_| SealError::InvalidKey)?;
    mac.update(message);
    Ok(mac)
}

/// This process's own sealing key: 32 random bytes drawn once (`None` only when the system
/// gives no randomness). What it seals does not outlive the process. One key serves every
/// [`Seal`] purpose: the MAC covers the prefix, so a text sealed for one cannot be opened as
/// another's.
pub fn process_key() -> Option<&'static [u8; 32]> {
    static KEY: std::sync::OnceLock<Option<[u8; 32]>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        let mut k = [0u8; 32];
        getrandom::fill(&mut k).ok().map(|()| k)
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: Seal = Seal::new("t1.", 256);
    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The MAC is HMAC-SHA256 as RFC 4231 defines it (test case 2).
    #[test]
    fn the_mac_matches_rfc_4231_case_2() {
        let mac = keyed(b"Jefe", b"what do ya want for nothing?")
            .map(|m| hex(&m.finalize().into_bytes()));
        assert_eq!(
            mac.as_deref(),
            Ok("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        );
    }

    /// A sealed text's MAC is that HMAC over its prefix and body.
    #[test]
    fn a_sealed_texts_mac_signs_its_prefix_and_body() {
        let sealed = TEST.seal(b"Jefe", b"what do ya want").unwrap_or_default();
        let (signed, mac) = sealed.rsplit_once('.').unwrap_or_default();
        assert_eq!(signed, "t1.d2hhdCBkbyB5YSB3YW50");
        let expected =
            keyed(b"Jefe", signed.as_bytes()).map(|m| m.finalize().into_bytes().to_vec());
        assert_eq!(BASE64_URL_SAFE_NO_PAD.decode(mac).ok(), expected.ok());
    }

    #[test]
    fn a_sealed_text_opens_only_intact_and_under_its_key_and_prefix() {
        let sealed = TEST.seal(KEY, b"{\"a\":1}").unwrap_or_default();
        assert_eq!(TEST.open(KEY, &sealed), Ok(b"{\"a\":1}".to_vec()));
        assert_eq!(
            TEST.open(b"another key of thirty-two bytes!", &sealed),
            Err(SealError::BadSignature)
        );
        // The same text under another prefix: the prefix is signed.
        let other = Seal::new("u1.", 256);
        let renamed = sealed.replacen("t1.", "u1.", 1);
        assert_eq!(other.open(KEY, &renamed), Err(SealError::BadSignature));
        assert_eq!(other.open(KEY, &sealed), Err(SealError::Malformed));
        for bad in ["", "t1.", "t1.abc", "t1.abc.", "t1.a.b.c", "x1.abc.def"] {
            assert!(TEST.open(KEY, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_bound_holds_both_ways() {
        // 3 + 4 * 52 + 1 + 43 = 255 fits; one more payload byte does not.
        assert!(TEST.seal(KEY, &[7; 156]).is_ok_and(|s| s.len() <= 256));
        assert_eq!(TEST.seal(KEY, &[7; 157]), Err(SealError::TooLarge));
        let long = format!("t1.{}", "a".repeat(300));
        assert_eq!(TEST.open(KEY, &long), Err(SealError::TooLarge));
    }
}
