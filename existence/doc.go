package existence
