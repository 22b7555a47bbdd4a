// The verdict judges the one threshold model's rules: whoever imports the results imports them too.
@_exported import ThresholdModel
