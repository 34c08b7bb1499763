//! The charge's QR image (`qr_code_base64`): the BR Code payload as a PNG, base64-encoded,
//! for an agent that shows an image rather than the text to copy.

use base64::Engine as _;
use qrcode::{Color, EcLevel, QrCode};

/// Pixels per module: a 512-character payload (version 15 at level M, 77 modules) stays under
/// 700 pixels a side, large enough for a phone camera on a screen.
const SCALE: usize = 8;
/// The quiet zone the QR specification requires around the symbol, in modules.
const QUIET: usize = 4;

/// The PNG of `payload` at error-correction level M (what the BR Code manual recommends),
/// base64 (standard alphabet, padded).
pub fn png_base64(payload: &str) -> Result<String, String> {
    let code = QrCode::with_error_correction_level(payload.as_bytes(), EcLevel::M)
        .map_err(|error| format!("cannot encode the payload as a QR code: {error}"))?;
    let modules = code.width();
    let colors = code.to_colors();
    let side = (modules + 2 * QUIET) * SCALE;
    let mut pixels = vec![0xFFu8; side * side];
    for (index, color) in colors.iter().enumerate() {
        if *color != Color::Dark {
            continue;
        }
        let (row, column) = (index / modules + QUIET, index % modules + QUIET);
        for y in row * SCALE..(row + 1) * SCALE {
            let start = y * side + column * SCALE;
            if let Some(span) = pixels.get_mut(start..start + SCALE) {
                span.fill(0);
            }
        }
    }
    let side = u32::try_from(side).map_err(|_| "the QR image is too large".to_owned())?;
    let mut png = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut png, side, side);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|error| format!("cannot write the PNG: {error}"))?;
        writer
            .write_image_data(&pixels)
            .map_err(|error| format!("cannot write the PNG: {error}"))?;
    }
    Ok(base64::engine::general_purpose::STANDARD.encode(png))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn issue_38_the_qr_image_is_a_png_of_the_payload() {
        let encoded = png_base64("00020101021226580014br.gov.bcb.pix").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let reader = decoder.read_info().unwrap();
        let info = reader.info();
        assert_eq!(info.width, info.height);
        assert_eq!(info.width as usize % SCALE, 0);
    }
}
