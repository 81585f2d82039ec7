import ArgumentParser
import CardCapture

/// `capture-cli validate`: checks a number, expiry and CVC without tokenizing anything.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Validate a card number, expiry and CVC without tokenizing.",
        discussion: "Exit status: 0 when every part given is valid, 1 when any is invalid, 2 on bad usage."
    )

    @Option(help: "The card number; spaces and dashes are allowed.")
    var number: String?

    @Option(help: "The expiry, as MM/YY, MM/YYYY, MMYY, M YYYY or YYYY-MM.")
    var expiry: String?

    @Option(help: "The card security code.")
    var cvc: String?

    @Option(name: .customLong("as-of"), help: "Validate as if today were this date (YYYY-MM-DD).")
    var asOf: String?

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        if number == nil && expiry == nil && cvc == nil {
            throw ValidationError("give at least one of --number, --expiry and --cvc")
        }
        if let asOf, CalendarDate(iso8601: asOf) == nil {
            throw ValidationError("--as-of must be a date written YYYY-MM-DD, for example 2027-01-31")
        }
    }

    func run() throws {
        let clock = asOf.flatMap(CalendarDate.init(iso8601:)).map(CardClock.fixed) ?? .system
        let result = CardValidator(clock: clock).validate(number: number, expiry: expiry, cvc: cvc)
        let shown = ValidationJSON(result, expiryInput: expiry, today: clock.today())
        if json {
            print(JSONLine.encode(shown))
        } else {
            for line in shown.humanLines { print(line) }
        }
        if !result.isValid { throw ExitCode(1) }
    }
}

/// The JSON shape of `validate --json`.
struct ValidationJSON: Encodable {
    struct Number: Encodable {
        let valid: Bool
        let brand: String?
        /// When several brands fit a number still too short to tell (`4`: visa, maestro, elo).
        let possibleBrands: [String]?
        let panMasked: String?
        let error: ErrorJSON?

        /// `possible_brands` as the issue tracker and the reference libraries' users know it.
        enum CodingKeys: String, CodingKey {
            case valid, brand, panMasked, error
            case possibleBrands = "possible_brands"
        }
    }

    struct ExpiryPart: Encodable {
        let valid: Bool
        let month: Int?
        let year: Int?
        let error: ErrorJSON?
    }

    struct CVCPart: Encodable {
        let valid: Bool
        let error: ErrorJSON?
    }

    let number: Number?
    let expiry: ExpiryPart?
    let cvc: CVCPart?

    /// - Parameter expiryInput: the expiry as given, so an expired card still shows its date.
    init(_ result: CardValidator.Result, expiryInput: String?, today: CalendarDate) {
        let printed = expiryInput.flatMap { Expiry.fields(of: $0, today: today) }
        let possible = result.possibleBrands.isEmpty ? nil : result.possibleBrands.map(\.id)
        number = result.number.map { outcome in
            switch outcome {
            case .success(let pan): Number(valid: true, brand: pan.brand.id, possibleBrands: nil, panMasked: pan.masked, error: nil)
            case .failure(let error):
                Number(valid: false, brand: result.brand?.id, possibleBrands: possible, panMasked: nil, error: ErrorJSON(error))
            }
        }
        expiry = result.expiry.map { outcome in
            switch outcome {
            case .success(let expiry): ExpiryPart(valid: true, month: expiry.month, year: expiry.year, error: nil)
            case .failure(let error) where error.code == .expiredCard:
                // An expired card's date was read fine: say which it was.
                ExpiryPart(valid: false, month: printed?.month, year: printed?.year, error: ErrorJSON(error))
            case .failure(let error):
                ExpiryPart(valid: false, month: nil, year: nil, error: ErrorJSON(error))
            }
        }
        cvc = result.cvc.map { outcome in
            switch outcome {
            case .success: CVCPart(valid: true, error: nil)
            case .failure(let error): CVCPart(valid: false, error: ErrorJSON(error))
            }
        }
    }

    var humanLines: [String] {
        var lines: [String] = []
        if let number {
            if number.valid {
                lines.append("number: valid \(number.brand ?? "") \(number.panMasked ?? "")")
            } else {
                var line = "number: invalid (\(number.error?.code ?? "")): \(number.error?.message ?? "")"
                if let brand = number.brand {
                    line += " [\(brand)]"
                } else if let possible = number.possibleBrands {
                    line += " [could be \(possible.joined(separator: ", "))]"
                }
                lines.append(line)
            }
        }
        if let expiry {
            if expiry.valid, let month = expiry.month, let year = expiry.year {
                lines.append("expiry: valid \(month < 10 ? "0" : "")\(month)/\(year)")
            } else {
                lines.append("expiry: invalid (\(expiry.error?.code ?? "")): \(expiry.error?.message ?? "")")
            }
        }
        if let cvc {
            lines.append(cvc.valid ? "cvc: valid" : "cvc: invalid (\(cvc.error?.code ?? "")): \(cvc.error?.message ?? "")")
        }
        return lines
    }
}

extension ErrorJSON {
    init(_ error: CardValidationError) {
        self.init(code: error.code.rawValue, message: error.message)
    }
}
