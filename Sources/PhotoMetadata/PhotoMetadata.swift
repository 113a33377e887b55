// PhotoMetadata module: placeholder until its owner fills it in.
