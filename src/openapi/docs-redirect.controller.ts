import { Controller, Get, HttpStatus, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';

/** `GET /` is where a person lands first: send them to Swagger UI. Not an API operation. */
@ApiExcludeController()
@Controller()
export class DocsRedirectController {
  @Get()
  @Redirect('/docs', HttpStatus.FOUND)
  root(): void {}
}
