import Foundation
public import OCRBridge

/// The card-digit recognizer this project trains for Tesseract (`make model`; how and on what
/// is in Models/README.md): an LSTM that knows only the ten digits, "/" and the space, trained
/// on card typefaces, embossed and printed, and on real embossed digits. It reads number rows
/// and dates; Debian's `eng` stays beside it for labels and names.
public enum CardModel {
    /// The trained data's language name: `card.traineddata`.
    public static let language = "card"

    /// The environment variable naming another folder holding `card.traineddata` (a model
    /// being trained, say).
    public static let folderVariable = "CAPTURE_CARD_MODEL_DIR"

    /// The folder holding `card.traineddata`: the variable's folder when set, else the copy
    /// built into the package's resources.
    public static var folder: String? {
        if let folder = ProcessInfo.processInfo.environment[folderVariable], !folder.isEmpty { return folder }
        return Bundle.module.path(forResource: language, ofType: "traineddata").map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().path
        }
    }

    /// An engine configuration that loads the model. The model has no word lists to switch off.
    public static var configuration: TesseractEngine.Configuration {
        TesseractEngine.Configuration(dataPath: folder, language: language, initVariables: [:])
    }
}
