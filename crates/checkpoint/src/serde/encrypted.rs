//! LangGraph's `EncryptedSerializer`: any serializer's bytes sealed by a cipher (AES-EAX).
//!
//! `dumps_typed` serializes with the inner serializer, encrypts the bytes and appends the
//! cipher's name to the tag: `("msgpack", b)` becomes `("msgpack+aes", nonce||tag||ct)`.
//! Even `None` is encrypted (`null+aes`, 32 bytes). `loads_typed` passes a tag without
//! `+` to the inner serializer unencrypted (so plaintext and encrypted data can live side
//! by side); otherwise it splits at the first `+`, decrypts and loads.
//!
//! [`AesCipher`] is the cipher of LangGraph's `EncryptedSerializer.from_pycryptodome_aes`:
//! AES in EAX mode with pycryptodome's defaults, a fresh random 16-byte nonce per value and
//! a 16-byte tag, written as `nonce || tag || ciphertext` under the name `aes`.

use std::fmt;
use std::sync::Arc;

use aes::{Aes128, Aes192, Aes256};
use eax::aead::generic_array::GenericArray;
use eax::aead::{AeadInPlace, KeyInit};
use eax::Eax;

use super::{JsonPlusSerializer, Serializer, Typed};
use crate::error::{Error, Result};
use crate::value::Value;

/// The environment variable LangGraph reads the AES key from: its text, UTF-8 encoded,
/// is the key, so it must be 16, 24 or 32 bytes long.
pub const AES_KEY_ENV: &str = "LANGGRAPH_AES_KEY";

/// The name [`AesCipher`] writes after the `+` of a tag.
pub const AES_CIPHER_NAME: &str = "aes";

const NONCE_LEN: usize = 16;
const TAG_LEN: usize = 16;

/// LangGraph's cipher protocol: bytes in, a cipher name and sealed bytes out.
pub trait Cipher: Send + Sync + fmt::Debug {
    /// Encrypts `plaintext`; returns the cipher's name (the tag suffix) and the ciphertext.
    fn encrypt(&self, plaintext: &[u8]) -> Result<(String, Vec<u8>)>;

    /// Decrypts `ciphertext` written by the cipher named `cipher_name`. A name this cipher
    /// does not know, a wrong key, or tampered or truncated bytes give [`Error::Cipher`].
    fn decrypt(&self, cipher_name: &str, ciphertext: &[u8]) -> Result<Vec<u8>>;
}

/// AES-EAX as pycryptodome's `AES.new(key, AES.MODE_EAX)`, LangGraph's default cipher.
#[derive(Clone)]
pub struct AesCipher(Key);

#[derive(Clone)]
enum Key {
    Aes128(Eax<Aes128>),
    Aes192(Eax<Aes192>),
    Aes256(Eax<Aes256>),
}

impl AesCipher {
    /// A cipher with a 16-, 24- or 32-byte key (AES-128, -192 or -256).
    pub fn new(key: &[u8]) -> Result<AesCipher> {
        let cipher = match key.len() {
            16 => Eax::new_from_slice(key).ok().map(Key::Aes128),
            24 => Eax::new_from_slice(key).ok().map(Key::Aes192),
            32 => Eax::new_from_slice(key).ok().map(Key::Aes256),
            _ => None,
        };
        cipher.map(AesCipher).ok_or_else(|| {
            Error::Cipher(format!(
                "AES key must be 16, 24 or 32 bytes, not {}",
                key.len()
            ))
        })
    }

    /// A cipher keyed from the environment variable [`AES_KEY_ENV`], as LangGraph does
    /// when no key is given: the variable's text, UTF-8 encoded, is the key.
    pub fn from_env() -> Result<AesCipher> {
        let key =
            std::env::var(AES_KEY_ENV).map_err(|e| Error::Cipher(format!("{AES_KEY_ENV}: {e}")))?;
        AesCipher::new(key.as_bytes())
    }

    /// The key length in bits: 128, 192 or 256.
    pub fn key_bits(&self) -> usize {
        match self.0 {
            Key::Aes128(_) => 128,
            Key::Aes192(_) => 192,
            Key::Aes256(_) => 256,
        }
    }

    /// Encrypts with a given nonce, giving `nonce || tag || ciphertext`.
    ///
    /// For reproducing known bytes in tests only: a nonce must never be used twice with
    /// the same key. [`Cipher::encrypt`] draws a fresh one from the operating system.
    pub fn encrypt_with_nonce(&self, nonce: &[u8; NONCE_LEN], plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(NONCE_LEN + TAG_LEN + plaintext.len());
        out.extend_from_slice(nonce);
        out.extend_from_slice(&[0; TAG_LEN]);
        out.extend_from_slice(plaintext);
        let (head, body) = out.split_at_mut(NONCE_LEN + TAG_LEN);
        let nonce = GenericArray::from_slice(nonce);
        let tag = match &self.0 {
            Key::Aes128(c) => c.encrypt_in_place_detached(nonce, b"", body),
            Key::Aes192(c) => c.encrypt_in_place_detached(nonce, b"", body),
            Key::Aes256(c) => c.encrypt_in_place_detached(nonce, b"", body),
        }
        .map_err(|_| Error::Cipher("AES-EAX encryption failed".to_owned()))?;
        head[NONCE_LEN..].copy_from_slice(&tag);
        Ok(out)
    }
}

impl Cipher for AesCipher {
    fn encrypt(&self, plaintext: &[u8]) -> Result<(String, Vec<u8>)> {
        let mut nonce = [0; NONCE_LEN];
        getrandom::fill(&mut nonce)
            .map_err(|e| Error::Cipher(format!("no randomness for the nonce: {e}")))?;
        Ok((
            AES_CIPHER_NAME.to_owned(),
            self.encrypt_with_nonce(&nonce, plaintext)?,
        ))
    }

    fn decrypt(&self, cipher_name: &str, ciphertext: &[u8]) -> Result<Vec<u8>> {
        if cipher_name != AES_CIPHER_NAME {
            return Err(Error::Cipher(format!("unsupported cipher {cipher_name:?}")));
        }
        if ciphertext.len() < NONCE_LEN + TAG_LEN {
            return Err(Error::Cipher(format!(
                "AES-EAX data of {} bytes is shorter than its nonce and tag",
                ciphertext.len()
            )));
        }
        let (nonce, rest) = ciphertext.split_at(NONCE_LEN);
        let (tag, body) = rest.split_at(TAG_LEN);
        let (nonce, tag) = (
            GenericArray::from_slice(nonce),
            GenericArray::from_slice(tag),
        );
        let mut plain = body.to_vec();
        match &self.0 {
            Key::Aes128(c) => c.decrypt_in_place_detached(nonce, b"", &mut plain, tag),
            Key::Aes192(c) => c.decrypt_in_place_detached(nonce, b"", &mut plain, tag),
            Key::Aes256(c) => c.decrypt_in_place_detached(nonce, b"", &mut plain, tag),
        }
        .map_err(|_| {
            Error::Cipher("AES-EAX authentication failed (wrong key or tampered data)".to_owned())
        })?;
        Ok(plain)
    }
}

impl fmt::Debug for AesCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("AesCipher")
            .field("key_bits", &self.key_bits())
            .finish()
    }
}

/// A serializer that encrypts what its inner serializer writes (LangGraph's
/// `EncryptedSerializer`); see the [module docs](self).
#[derive(Clone, Debug)]
pub struct EncryptedSerializer {
    cipher: Arc<dyn Cipher>,
    inner: Arc<dyn Serializer>,
}

impl EncryptedSerializer {
    /// Wraps `inner` with `cipher`.
    pub fn new(cipher: Arc<dyn Cipher>, inner: Arc<dyn Serializer>) -> EncryptedSerializer {
        EncryptedSerializer { cipher, inner }
    }

    /// Wraps a [`JsonPlusSerializer`] with `cipher`.
    #[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
    pub fn with_cipher(cipher: impl Cipher + 'static) -> EncryptedSerializer {
        EncryptedSerializer::new(Arc::new(cipher), Arc::new(JsonPlusSerializer::default()))
    }

    /// AES-EAX over a [`JsonPlusSerializer`] with the given 16-, 24- or 32-byte key, as
    /// LangGraph's `EncryptedSerializer.from_pycryptodome_aes(key=...)`.
    pub fn aes(key: &[u8]) -> Result<EncryptedSerializer> {
        Ok(EncryptedSerializer::with_cipher(AesCipher::new(key)?))
    }

    /// AES-EAX over a [`JsonPlusSerializer`], keyed from [`AES_KEY_ENV`], as LangGraph's
    /// `EncryptedSerializer.from_pycryptodome_aes()`.
    pub fn aes_from_env() -> Result<EncryptedSerializer> {
        Ok(EncryptedSerializer::with_cipher(AesCipher::from_env()?))
    }

    /// The cipher.
    pub fn cipher(&self) -> &Arc<dyn Cipher> {
        &self.cipher
    }

    /// The inner serializer.
    pub fn inner(&self) -> &Arc<dyn Serializer> {
        &self.inner
    }
}

impl Serializer for EncryptedSerializer {
    fn dumps_typed(&self, value: &Value) -> Result<Typed> {
        let plain = self.inner.dumps_typed(value)?;
        let (name, sealed) = self.cipher.encrypt(&plain.bytes)?;
        Ok(Typed::new(format!("{}+{}", plain.tag, name), sealed))
    }

    fn dumps_checkpoint(&self, checkpoint: &crate::Checkpoint, with_values: bool) -> Result<Typed> {
        let plain = self.inner.dumps_checkpoint(checkpoint, with_values)?;
        let (name, sealed) = self.cipher.encrypt(&plain.bytes)?;
        Ok(Typed::new(format!("{}+{}", plain.tag, name), sealed))
    }

    fn round_trips(&self) -> bool {
        self.inner.round_trips()
    }

    fn loads_typed(&self, tag: &str, bytes: &[u8]) -> Result<Value> {
        match tag.split_once('+') {
            None => self.inner.loads_typed(tag, bytes),
            Some((tag, cipher_name)) => {
                let plain = self.cipher.decrypt(cipher_name, bytes)?;
                self.inner.loads_typed(tag, &plain)
            }
        }
    }
}
